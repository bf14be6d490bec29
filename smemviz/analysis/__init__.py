"""Analyses: functions that read a computed :class:`~smemviz.LayoutPlan` and answer a question about it."""
