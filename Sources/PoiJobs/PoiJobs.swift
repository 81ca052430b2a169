// PoiJobs: see README.md in this folder.
