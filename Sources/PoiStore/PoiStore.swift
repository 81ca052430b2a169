// PoiStore: see README.md in this folder.
