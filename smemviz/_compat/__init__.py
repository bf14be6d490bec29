"""Every use smemviz makes of another package's private parts, one module per package.

Each module states the versions its tests cover and checks, before using a
private part, that the installed version is one of them and that the part is
there; outside that range smemviz takes the package's public API instead
(slower or plainer, never wrong). Nothing else in smemviz touches another
package's internals.
"""
