// PoiFormats: see README.md in this folder.
