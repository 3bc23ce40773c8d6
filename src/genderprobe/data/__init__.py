"""The packaged data several studies share: the name lists (``names/``, their
sources in SOURCES.md, read by ``name_lists``), and the reader of every study's
packaged files by key (``packaged``).

It may import the registry (which says where each study's data folder is)
and the base.
"""
