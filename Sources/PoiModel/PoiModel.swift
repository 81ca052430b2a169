// PoiModel: see README.md in this folder.
