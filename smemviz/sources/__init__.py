"""Sources: where layouts come from when they are not written against smemviz's allocator."""
