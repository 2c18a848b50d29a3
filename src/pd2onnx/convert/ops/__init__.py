"""Mapper modules, one per op family (DESIGN.md). Every public module here is imported
by the registry; modules starting with ``_`` hold shared helpers."""
