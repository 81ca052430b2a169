/// The OpenAPI 3.1 description of `poi serve`'s API, served at `GET /openapi.json`: every route,
/// parameter, request body, response (status, headers, schema), the write-token scheme and the
/// links between operations. Kept by hand beside the routes (PoiServer.buildRouter); a test
/// fails when a route is missing here or an operation here has no route, and schemathesis
/// (`make api-fuzz`, in CI) checks the live server against it.
enum OpenAPIDocument {
    static let json = #"""
{
 "openapi": "3.1.0",
 "info": {
  "title": "PoiKit poi serve",
  "version": "1.0.0",
  "description": "The TourMyTown backend's REST API as `poi serve` answers it: the tutorial's Express server's routes and answers, made safe. Generate a Swift client with swift-openapi-generator (README)."
 },
 "servers": [
  {
   "url": "/"
  }
 ],
 "components": {
  "responses": {
   "BadRequest": {
    "description": "The request is malformed: a bad id, query, parameter or body.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "Unauthorized": {
    "description": "Writes need `Authorization: Bearer <token>` (the server was started with --write-token).",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "Unavailable": {
    "description": "The database cannot answer now (an election, a stalled or unreachable database).",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    },
    "headers": {
     "Retry-After": {
      "description": "Seconds to wait before retrying.",
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "TooLarge": {
    "description": "The body is larger than the server accepts.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "UnsupportedMediaType": {
    "description": "The body's Content-Type is not accepted.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "Conflict": {
    "description": "A unique key is taken.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "QueryTimeout": {
    "description": "The query took longer than the server's limit.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "FileBytes": {
    "description": "The bytes.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     },
     "Last-Modified": {
      "schema": {
       "type": "string"
      }
     },
     "Accept-Ranges": {
      "schema": {
       "type": "string"
      }
     }
    },
    "content": {
     "image/jpeg": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     },
     "image/png": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     },
     "image/gif": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     },
     "image/webp": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     }
    }
   },
   "FilePart": {
    "description": "The range asked for.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     },
     "Last-Modified": {
      "schema": {
       "type": "string"
      }
     },
     "Accept-Ranges": {
      "schema": {
       "type": "string"
      }
     },
     "Content-Range": {
      "schema": {
       "type": "string"
      }
     }
    },
    "content": {
     "image/jpeg": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     },
     "image/png": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     },
     "image/gif": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     },
     "image/webp": {
      "schema": {
       "type": "string",
       "format": "binary"
      }
     }
    }
   },
   "FileNotModified": {
    "description": "Not modified.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "FileNotFound": {
    "description": "No such file (the reference's plain text) or thumbnail (JSON).",
    "content": {
     "text/html": {
      "schema": {
       "type": "string"
      }
     },
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "FilePreconditionFailed": {
    "description": "If-Match or If-Unmodified-Since not met.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    },
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "FileRangeNotSatisfiable": {
    "description": "Range not satisfiable.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    },
    "headers": {
     "Content-Range": {
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "FileDamaged": {
    "description": "The stored bytes are damaged.",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "HeadFileBytes": {
    "description": "The bytes.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     },
     "Last-Modified": {
      "schema": {
       "type": "string"
      }
     },
     "Accept-Ranges": {
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "HeadFilePart": {
    "description": "The range asked for.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     },
     "Last-Modified": {
      "schema": {
       "type": "string"
      }
     },
     "Accept-Ranges": {
      "schema": {
       "type": "string"
      }
     },
     "Content-Range": {
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "HeadFileNotModified": {
    "description": "Not modified.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "HeadFileNotFound": {
    "description": "No such file (the reference's plain text) or thumbnail (JSON)."
   },
   "HeadFilePreconditionFailed": {
    "description": "If-Match or If-Unmodified-Since not met.",
    "headers": {
     "ETag": {
      "description": "The stored file's strong validator.",
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "HeadFileRangeNotSatisfiable": {
    "description": "Range not satisfiable.",
    "headers": {
     "Content-Range": {
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "HeadFileDamaged": {
    "description": "The stored bytes are damaged."
   },
   "NotModified": {
    "description": "Not modified: the If-None-Match tag is this answer's.",
    "headers": {
     "ETag": {
      "description": "A weak validator of the body (Express's own).",
      "schema": {
       "type": "string"
      }
     }
    }
   },
   "ServerError": {
    "description": "A fault of the server's (the database refused what it should not have).",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   }
  },
  "parameters": {
   "Collection": {
    "name": "collection",
    "in": "path",
    "required": true,
    "description": "A collection name (not system.*, no '$').",
    "schema": {
     "type": "string",
     "minLength": 1,
     "maxLength": 200,
     "pattern": "^(?!system\\.)(?!\\.)[^$\\u0000]*[^$\\u0000.]$"
    }
   },
   "Entity": {
    "name": "entity",
    "in": "path",
    "required": true,
    "description": "A document's `_id`: 24 hex digits.",
    "schema": {
     "$ref": "#/components/schemas/ObjectIdHex"
    }
   },
   "FileId": {
    "name": "id",
    "in": "path",
    "required": true,
    "description": "A file's `_id`: 24 hex digits.",
    "schema": {
     "$ref": "#/components/schemas/ObjectIdHex"
    }
   },
   "List_query": {
    "name": "query",
    "in": "query",
    "description": "A MongoDB filter as JSON; server-side JavaScript operators are refused.",
    "schema": {
     "type": "string"
    }
   },
   "List_limit": {
    "name": "limit",
    "in": "query",
    "description": "At most this many documents (0: the server's cap).",
    "schema": {
     "type": "integer",
     "minimum": 0
    }
   },
   "List_skip": {
    "name": "skip",
    "in": "query",
    "schema": {
     "type": "integer",
     "minimum": 0
    }
   },
   "List_after": {
    "name": "after",
    "in": "query",
    "description": "Keyset paging: the documents after this `_id`, in `_id` order (the `Link: rel=next` of a page cut short gives it).",
    "schema": {
     "$ref": "#/components/schemas/ObjectIdHex"
    }
   },
   "List_sort": {
    "name": "sort",
    "in": "query",
    "description": "`name,-created_at` or a JSON object of 1/-1.",
    "schema": {
     "type": "string"
    }
   },
   "List_fields": {
    "name": "fields",
    "in": "query",
    "description": "`name,location`: those fields and `_id`.",
    "schema": {
     "type": "string"
    }
   },
   "List_format": {
    "name": "format",
    "in": "query",
    "description": "`json` (the default). GeoJSON is for `/locations` only.",
    "schema": {
     "type": "string",
     "enum": [
      "json"
     ]
    }
   },
   "Header_Range": {
    "name": "Range",
    "in": "header",
    "description": "One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`, RFC 9110 §14.2): 206, or 416 when it starts past the end; another unit, several ranges or bad syntax: the whole file (200). A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    },
    "examples": {
     "first100": {
      "value": "bytes=0-99"
     }
    }
   },
   "Header_IfNoneMatch": {
    "name": "If-None-Match",
    "in": "header",
    "description": "`*` or entity tags as RFC 9110 §8.8.3 writes them (`\"…\"`, `W/\"…\"`, comma-separated), compared weakly: a held tag gets 304. A value that is no tag never matches. A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    },
    "examples": {
     "tag": {
      "value": "W/\"2-l9Fw4VUO7kr8CvBlt4zaMCqXZ0w\""
     }
    }
   },
   "Header_IfMatch": {
    "name": "If-Match",
    "in": "header",
    "description": "`*` or strong entity tags (`\"…\"`, RFC 9110 §13.1.1): any other version of the file, or a value that is no tag, is 412. A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    },
    "examples": {
     "tag": {
      "value": "\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\""
     }
    }
   },
   "Header_IfRange": {
    "name": "If-Range",
    "in": "header",
    "description": "The file's strong entity tag or its Last-Modified date (RFC 9110 §13.1.5): the Range is honoured only for that version, else the whole file (200). A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    }
   },
   "Header_IfModifiedSince": {
    "name": "If-Modified-Since",
    "in": "header",
    "description": "An HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`); a value that is no date is ignored. A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    }
   },
   "Header_IfUnmodifiedSince": {
    "name": "If-Unmodified-Since",
    "in": "header",
    "description": "An HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`); a value that is no date is ignored. A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    }
   },
   "Header_IfNoneMatch_Body": {
    "name": "If-None-Match",
    "in": "header",
    "description": "The ETag of the answer the client holds (`W/\"…\"`, RFC 9110 §8.8.3): 304 when it is still this answer's. A value that is no tag never matches. A value percent-encoded whole, as swift-openapi-generator sends header values (`%22…%22`, `W%2F%22…%22`, `bytes%3D0-99`, `%2A`), is read decoded: such a value is never valid as sent, so it cannot be mistaken for another.",
    "schema": {
     "type": "string"
    }
   },
   "Locations_format": {
    "name": "format",
    "in": "query",
    "description": "`geojson`: a FeatureCollection of the places (their `location` is each Feature's geometry).",
    "schema": {
     "type": "string",
     "enum": [
      "json",
      "geojson"
     ]
    }
   }
  },
  "securitySchemes": {
   "writeToken": {
    "type": "http",
    "scheme": "bearer",
    "description": "Needed for writes only when the server was started with --write-token or POI_WRITE_TOKEN."
   }
  },
  "schemas": {
   "ObjectIdHex": {
    "type": "string",
    "pattern": "^[0-9a-fA-F]{24}$"
   },
   "Error": {
    "type": "object",
    "required": [
     "error"
    ],
    "properties": {
     "error": {
      "type": "string"
     },
     "operator": {
      "type": "string"
     }
    }
   },
   "Document": {
    "type": "object",
    "description": "A stored document as JSON (dates as ISO 8601, ObjectIds as hex).",
    "additionalProperties": true
   },
   "NewDocument": {
    "type": "object",
    "description": "Any JSON object (MongoDB Extended JSON: `{\"$oid\": …}`, `{\"$date\": …}` become an ObjectId and a date); no field name may be empty or hold NUL, at any depth, and no top-level one may start with '$'.",
    "propertyNames": {
     "minLength": 1,
     "pattern": "^[^$\\u0000][^\\u0000]*$"
    },
    "additionalProperties": {
     "$ref": "#/components/schemas/JSONValue"
    }
   },
   "Place": {
    "type": "object",
    "description": "A `locations` document as the app reads it.",
    "properties": {
     "_id": {
      "$ref": "#/components/schemas/ObjectIdHex"
     },
     "name": {
      "type": "string"
     },
     "placename": {
      "type": "string"
     },
     "details": {
      "type": "string"
     },
     "location": {
      "type": "object",
      "properties": {
       "type": {
        "const": "Point"
       },
       "coordinates": {
        "type": "array",
        "items": {
         "type": "number"
        },
        "minItems": 2
       }
      }
     },
     "categories": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "imageId": {
      "type": "string"
     },
     "thumbnailId": {
      "type": "string"
     }
    },
    "additionalProperties": true
   },
   "FileDocument": {
    "type": "object",
    "properties": {
     "_id": {
      "$ref": "#/components/schemas/ObjectIdHex"
     },
     "content-type": {
      "type": "string"
     },
     "ext": {
      "type": "string"
     }
    },
    "additionalProperties": true
   },
   "Created": {
    "type": "object",
    "required": [
     "_id"
    ],
    "properties": {
     "_id": {
      "$ref": "#/components/schemas/ObjectIdHex"
     }
    },
    "additionalProperties": true
   },
   "Deleted": {
    "type": "object",
    "properties": {
     "n": {
      "type": "integer"
     },
     "ok": {
      "type": "integer"
     },
     "deletedCount": {
      "type": "integer"
     }
    },
    "additionalProperties": true
   },
   "FeatureCollection": {
    "type": "object",
    "required": [
     "type",
     "features"
    ],
    "properties": {
     "type": {
      "const": "FeatureCollection"
     },
     "features": {
      "type": "array",
      "items": {
       "type": "object"
      }
     }
    }
   },
   "Health": {
    "type": "object",
    "required": [
     "ok",
     "problems"
    ],
    "properties": {
     "ok": {
      "type": "boolean"
     },
     "problems": {
      "type": "array",
      "items": {
       "type": "string"
      }
     }
    }
   },
   "JSONValue": {
    "description": "Any JSON value whose objects have no empty field name and none holding NUL, at any depth (the database refuses them). Stored as the reference server stores it: a lone surrogate escape (`\\ud800`) as U+FFFD, an integer beyond 64 bits as a double.",
    "anyOf": [
     {
      "type": "object",
      "propertyNames": {
       "minLength": 1,
       "pattern": "^[^\\u0000]*$"
      },
      "additionalProperties": {
       "$ref": "#/components/schemas/JSONValue"
      }
     },
     {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/JSONValue"
      }
     },
     {
      "type": [
       "string",
       "null"
      ]
     },
     {
      "type": "number"
     },
     {
      "type": "boolean"
     }
    ]
   }
  }
 },
 "paths": {
  "/": {
   "get": {
    "operationId": "hello",
    "summary": "The hello page (a browser, asking for text/html, also gets links to the map and the table).",
    "responses": {
     "200": {
      "description": "HTML.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   },
   "head": {
    "operationId": "headHello",
    "summary": "The headers hello would send, without the body.",
    "responses": {
     "200": {
      "description": "HTML.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   }
  },
  "/healthz": {
   "get": {
    "operationId": "health",
    "summary": "Database answering and uploads writable.",
    "responses": {
     "200": {
      "description": "Healthy.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      },
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "503": {
      "description": "Not healthy.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      }
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   },
   "head": {
    "operationId": "headHealth",
    "summary": "The headers health would send, without the body.",
    "responses": {
     "200": {
      "description": "Healthy.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "503": {
      "description": "Not healthy."
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   }
  },
  "/openapi.json": {
   "get": {
    "operationId": "openapi",
    "summary": "This document.",
    "responses": {
     "200": {
      "description": "The OpenAPI document.",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      },
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   },
   "head": {
    "operationId": "headOpenapi",
    "summary": "The headers openapi would send, without the body.",
    "responses": {
     "200": {
      "description": "The OpenAPI document.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   }
  },
  "/map": {
   "get": {
    "operationId": "map",
    "summary": "The places of `locations` on a map, for a browser (HTML; its script reads GET /locations).",
    "responses": {
     "200": {
      "description": "The map page: HTML whose script and styles are the /assets files.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "Content-Security-Policy": {
        "description": "Scripts and styles from this server only; images from here and the tile host.",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   },
   "head": {
    "operationId": "headMap",
    "summary": "The headers map would send, without the body.",
    "responses": {
     "200": {
      "description": "The map page: HTML whose script and styles are the /assets files.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "Content-Security-Policy": {
        "description": "Scripts and styles from this server only; images from here and the tile host.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ]
   }
  },
  "/assets/map/{file}": {
   "get": {
    "operationId": "mapAsset",
    "summary": "The map page's own script (map.js) and style (map.css).",
    "parameters": [
     {
      "name": "file",
      "in": "path",
      "required": true,
      "description": "The file's name: only these are served (any other is 404).",
      "schema": {
       "type": "string",
       "enum": [
        "map.js",
        "map.css"
       ]
      }
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The file.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "text/javascript": {
        "schema": {
         "type": "string"
        }
       },
       "text/css": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "404": {
      "description": "No such file, or Leaflet is not installed (the error says how to install it).",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   },
   "head": {
    "operationId": "headMapAsset",
    "summary": "The headers mapAsset would send, without the body.",
    "parameters": [
     {
      "name": "file",
      "in": "path",
      "required": true,
      "description": "The file's name: only these are served (any other is 404).",
      "schema": {
       "type": "string",
       "enum": [
        "map.js",
        "map.css"
       ]
      }
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The file.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "404": {
      "description": "No such file, or Leaflet is not installed (the error says how to install it)."
     }
    }
   }
  },
  "/assets/leaflet/{file}": {
   "get": {
    "operationId": "leafletAsset",
    "summary": "Leaflet and Leaflet.markercluster, as installed on the server.",
    "parameters": [
     {
      "name": "file",
      "in": "path",
      "required": true,
      "description": "The file's name: only these are served (any other is 404).",
      "schema": {
       "type": "string",
       "enum": [
        "leaflet.min.js",
        "leaflet.css",
        "leaflet.markercluster.min.js",
        "MarkerCluster.css",
        "MarkerCluster.Default.css"
       ]
      }
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The file.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "text/javascript": {
        "schema": {
         "type": "string"
        }
       },
       "text/css": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "404": {
      "description": "No such file, or Leaflet is not installed (the error says how to install it).",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   },
   "head": {
    "operationId": "headLeafletAsset",
    "summary": "The headers leafletAsset would send, without the body.",
    "parameters": [
     {
      "name": "file",
      "in": "path",
      "required": true,
      "description": "The file's name: only these are served (any other is 404).",
      "schema": {
       "type": "string",
       "enum": [
        "leaflet.min.js",
        "leaflet.css",
        "leaflet.markercluster.min.js",
        "MarkerCluster.css",
        "MarkerCluster.Default.css"
       ]
      }
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The file.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "404": {
      "description": "No such file, or Leaflet is not installed (the error says how to install it)."
     }
    }
   }
  },
  "/assets/leaflet/images/{file}": {
   "get": {
    "operationId": "leafletImage",
    "summary": "Leaflet's marker and control images.",
    "parameters": [
     {
      "name": "file",
      "in": "path",
      "required": true,
      "description": "The file's name: only these are served (any other is 404).",
      "schema": {
       "type": "string",
       "enum": [
        "marker-icon.png",
        "marker-icon-2x.png",
        "marker-shadow.png",
        "layers.png",
        "layers-2x.png"
       ]
      }
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The file.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "image/png": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "404": {
      "description": "No such file, or Leaflet is not installed (the error says how to install it).",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    }
   },
   "head": {
    "operationId": "headLeafletImage",
    "summary": "The headers leafletImage would send, without the body.",
    "parameters": [
     {
      "name": "file",
      "in": "path",
      "required": true,
      "description": "The file's name: only these are served (any other is 404).",
      "schema": {
       "type": "string",
       "enum": [
        "marker-icon.png",
        "marker-icon-2x.png",
        "marker-shadow.png",
        "layers.png",
        "layers-2x.png"
       ]
      }
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The file.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "404": {
      "description": "No such file, or Leaflet is not installed (the error says how to install it)."
     }
    }
   }
  },
  "/files": {
   "get": {
    "operationId": "listFiles",
    "summary": "The `files` documents.",
    "parameters": [
     {
      "$ref": "#/components/parameters/List_query"
     },
     {
      "$ref": "#/components/parameters/List_limit"
     },
     {
      "$ref": "#/components/parameters/List_skip"
     },
     {
      "$ref": "#/components/parameters/List_after"
     },
     {
      "$ref": "#/components/parameters/List_sort"
     },
     {
      "$ref": "#/components/parameters/List_fields"
     },
     {
      "$ref": "#/components/parameters/List_format"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "Documents.",
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/FileDocument"
         }
        }
       }
      },
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "Link": {
        "description": "The next page (RFC 8288).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     },
     "504": {
      "$ref": "#/components/responses/QueryTimeout"
     }
    }
   },
   "post": {
    "operationId": "uploadFile",
    "summary": "Store an image (raw body or multipart part `file`).",
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "image/jpeg": {
       "schema": {
        "type": "string",
        "format": "binary"
       }
      },
      "image/png": {
       "schema": {
        "type": "string",
        "format": "binary"
       }
      },
      "image/gif": {
       "schema": {
        "type": "string",
        "format": "binary"
       }
      },
      "image/webp": {
       "schema": {
        "type": "string",
        "format": "binary"
       }
      },
      "multipart/form-data": {
       "schema": {
        "type": "object",
        "required": [
         "file"
        ],
        "properties": {
         "file": {
          "type": "string",
          "format": "binary",
          "description": "The image's bytes. The server tells JPEG, PNG, GIF and WebP apart by their first bytes, so the part is sent as application/octet-stream (one type: a generator given a list of types falls back to text/plain, which is refused); a part typed image/jpeg, image/png, image/gif or image/webp is accepted too, when its bytes are that type."
         }
        }
       },
       "encoding": {
        "file": {
         "contentType": "application/octet-stream"
        }
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Stored.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Created"
        }
       }
      },
      "links": {
       "GetFile": {
        "operationId": "downloadFile",
        "parameters": {
         "id": "$response.body#/_id"
        }
       },
       "GetThumbnail": {
        "operationId": "downloadThumbnail",
        "parameters": {
         "id": "$response.body#/_id"
        }
       },
       "DeleteFile": {
        "operationId": "deleteFile",
        "parameters": {
         "id": "$response.body#/_id"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "413": {
      "$ref": "#/components/responses/TooLarge"
     },
     "415": {
      "$ref": "#/components/responses/UnsupportedMediaType"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "head": {
    "operationId": "headFiles",
    "summary": "The headers listFiles would send, without the body.",
    "parameters": [
     {
      "$ref": "#/components/parameters/List_query"
     },
     {
      "$ref": "#/components/parameters/List_limit"
     },
     {
      "$ref": "#/components/parameters/List_skip"
     },
     {
      "$ref": "#/components/parameters/List_after"
     },
     {
      "$ref": "#/components/parameters/List_sort"
     },
     {
      "$ref": "#/components/parameters/List_fields"
     },
     {
      "$ref": "#/components/parameters/List_format"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "Documents.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "Link": {
        "description": "The next page (RFC 8288).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "description": "The request is malformed: a bad id, query, parameter or body."
     },
     "500": {
      "description": "A fault of the server's (the database refused what it should not have)."
     },
     "503": {
      "description": "The database cannot answer now (an election, a stalled or unreachable database).",
      "headers": {
       "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "504": {
      "description": "The query took longer than the server's limit."
     }
    }
   }
  },
  "/files/{id}": {
   "get": {
    "parameters": [
     {
      "$ref": "#/components/parameters/FileId"
     },
     {
      "$ref": "#/components/parameters/Header_Range"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfRange"
     },
     {
      "$ref": "#/components/parameters/Header_IfModifiedSince"
     },
     {
      "$ref": "#/components/parameters/Header_IfUnmodifiedSince"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/FileBytes"
     },
     "206": {
      "$ref": "#/components/responses/FilePart"
     },
     "304": {
      "$ref": "#/components/responses/FileNotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "404": {
      "$ref": "#/components/responses/FileNotFound"
     },
     "412": {
      "$ref": "#/components/responses/FilePreconditionFailed"
     },
     "416": {
      "$ref": "#/components/responses/FileRangeNotSatisfiable"
     },
     "500": {
      "$ref": "#/components/responses/FileDamaged"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    },
    "operationId": "downloadFile",
    "summary": "The file's bytes."
   },
   "head": {
    "parameters": [
     {
      "$ref": "#/components/parameters/FileId"
     },
     {
      "$ref": "#/components/parameters/Header_Range"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfRange"
     },
     {
      "$ref": "#/components/parameters/Header_IfModifiedSince"
     },
     {
      "$ref": "#/components/parameters/Header_IfUnmodifiedSince"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/HeadFileBytes"
     },
     "206": {
      "$ref": "#/components/responses/HeadFilePart"
     },
     "304": {
      "$ref": "#/components/responses/HeadFileNotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "404": {
      "$ref": "#/components/responses/HeadFileNotFound"
     },
     "412": {
      "$ref": "#/components/responses/HeadFilePreconditionFailed"
     },
     "416": {
      "$ref": "#/components/responses/HeadFileRangeNotSatisfiable"
     },
     "500": {
      "$ref": "#/components/responses/HeadFileDamaged"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    },
    "operationId": "headFile",
    "summary": "The file's headers."
   },
   "put": {
    "operationId": "replaceFileDocument",
    "summary": "Replace the `files` document.",
    "parameters": [
     {
      "$ref": "#/components/parameters/FileId"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "requestBody": {
     "required": false,
     "description": "A JSON object; an empty body is an empty document, as the reference server takes it.",
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewDocument"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The new document.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Document"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "409": {
      "$ref": "#/components/responses/Conflict"
     },
     "413": {
      "$ref": "#/components/responses/TooLarge"
     },
     "415": {
      "$ref": "#/components/responses/UnsupportedMediaType"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "delete": {
    "operationId": "deleteFile",
    "summary": "Delete the file, its bytes and its thumbnails.",
    "parameters": [
     {
      "$ref": "#/components/parameters/FileId"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "responses": {
     "200": {
      "description": "Deleted.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Deleted"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   }
  },
  "/files/{id}/thumbnail": {
   "get": {
    "parameters": [
     {
      "$ref": "#/components/parameters/FileId"
     },
     {
      "$ref": "#/components/parameters/Header_Range"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfRange"
     },
     {
      "$ref": "#/components/parameters/Header_IfModifiedSince"
     },
     {
      "$ref": "#/components/parameters/Header_IfUnmodifiedSince"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/FileBytes"
     },
     "206": {
      "$ref": "#/components/responses/FilePart"
     },
     "304": {
      "$ref": "#/components/responses/FileNotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "404": {
      "$ref": "#/components/responses/FileNotFound"
     },
     "412": {
      "$ref": "#/components/responses/FilePreconditionFailed"
     },
     "416": {
      "$ref": "#/components/responses/FileRangeNotSatisfiable"
     },
     "500": {
      "$ref": "#/components/responses/FileDamaged"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    },
    "operationId": "downloadThumbnail",
    "summary": "The file's thumbnail."
   },
   "head": {
    "parameters": [
     {
      "$ref": "#/components/parameters/FileId"
     },
     {
      "$ref": "#/components/parameters/Header_Range"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfMatch"
     },
     {
      "$ref": "#/components/parameters/Header_IfRange"
     },
     {
      "$ref": "#/components/parameters/Header_IfModifiedSince"
     },
     {
      "$ref": "#/components/parameters/Header_IfUnmodifiedSince"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/HeadFileBytes"
     },
     "206": {
      "$ref": "#/components/responses/HeadFilePart"
     },
     "304": {
      "$ref": "#/components/responses/HeadFileNotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "404": {
      "$ref": "#/components/responses/HeadFileNotFound"
     },
     "412": {
      "$ref": "#/components/responses/HeadFilePreconditionFailed"
     },
     "416": {
      "$ref": "#/components/responses/HeadFileRangeNotSatisfiable"
     },
     "500": {
      "$ref": "#/components/responses/HeadFileDamaged"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    },
    "operationId": "headThumbnail",
    "summary": "The thumbnail's headers."
   }
  },
  "/locations": {
   "get": {
    "operationId": "listLocations",
    "summary": "Places (at most the server's cap); `format=geojson` for a FeatureCollection.",
    "parameters": [
     {
      "$ref": "#/components/parameters/List_query"
     },
     {
      "$ref": "#/components/parameters/List_limit"
     },
     {
      "$ref": "#/components/parameters/List_skip"
     },
     {
      "$ref": "#/components/parameters/List_after"
     },
     {
      "$ref": "#/components/parameters/List_sort"
     },
     {
      "$ref": "#/components/parameters/List_fields"
     },
     {
      "$ref": "#/components/parameters/Locations_format"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "Places (JSON), a FeatureCollection (format=geojson) or an HTML table (a browser).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "X-Results-Truncated": {
        "schema": {
         "type": "string"
        }
       },
       "Link": {
        "description": "`<…&after=ID>; rel=\"next\"` (RFC 8288) when the page was cut at `limit` or the server's cap, in `_id` order.",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Document"
         }
        }
       },
       "text/html": {
        "schema": {
         "type": "string"
        }
       },
       "application/geo+json": {
        "schema": {
         "$ref": "#/components/schemas/FeatureCollection"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     },
     "504": {
      "$ref": "#/components/responses/QueryTimeout"
     }
    }
   },
   "post": {
    "operationId": "createLocation",
    "summary": "Insert a place (adds created_at).",
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "requestBody": {
     "required": false,
     "description": "A JSON object; an empty body is an empty document, as the reference server takes it.",
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewDocument"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "The stored document.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Created"
        }
       }
      },
      "links": {
       "GetDocument": {
        "operationId": "getLocation",
        "parameters": {
         "entity": "$response.body#/_id"
        }
       },
       "ReplaceDocument": {
        "operationId": "replaceLocation",
        "parameters": {
         "entity": "$response.body#/_id"
        }
       },
       "DeleteDocument": {
        "operationId": "deleteLocation",
        "parameters": {
         "entity": "$response.body#/_id"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "409": {
      "$ref": "#/components/responses/Conflict"
     },
     "413": {
      "$ref": "#/components/responses/TooLarge"
     },
     "415": {
      "$ref": "#/components/responses/UnsupportedMediaType"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "head": {
    "operationId": "headLocations",
    "summary": "The headers listLocations would send, without the body.",
    "parameters": [
     {
      "$ref": "#/components/parameters/List_query"
     },
     {
      "$ref": "#/components/parameters/List_limit"
     },
     {
      "$ref": "#/components/parameters/List_skip"
     },
     {
      "$ref": "#/components/parameters/List_after"
     },
     {
      "$ref": "#/components/parameters/List_sort"
     },
     {
      "$ref": "#/components/parameters/List_fields"
     },
     {
      "$ref": "#/components/parameters/Locations_format"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "Places (JSON), a FeatureCollection (format=geojson) or an HTML table (a browser).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "X-Results-Truncated": {
        "schema": {
         "type": "string"
        }
       },
       "Link": {
        "description": "`<…&after=ID>; rel=\"next\"` (RFC 8288) when the page was cut at `limit` or the server's cap, in `_id` order.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "description": "The request is malformed: a bad id, query, parameter or body."
     },
     "500": {
      "description": "A fault of the server's (the database refused what it should not have)."
     },
     "503": {
      "description": "The database cannot answer now (an election, a stalled or unreachable database).",
      "headers": {
       "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "504": {
      "description": "The query took longer than the server's limit."
     }
    }
   }
  },
  "/locations/{entity}": {
   "get": {
    "operationId": "getLocation",
    "summary": "One place; an empty text/plain 200 when there is none (as the reference).",
    "parameters": [
     {
      "$ref": "#/components/parameters/Entity"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The document (JSON); or, when there is none, an empty `text/plain` body, as the reference answers a missing document (an empty 200; the type lets a typed client tell the two apart).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Document"
        }
       },
       "text/plain": {
        "schema": {
         "type": "string",
         "maxLength": 0
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     },
     "504": {
      "$ref": "#/components/responses/QueryTimeout"
     }
    }
   },
   "put": {
    "operationId": "replaceLocation",
    "summary": "Replace a place (adds updated_at; keeps importKey and source).",
    "parameters": [
     {
      "$ref": "#/components/parameters/Entity"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "requestBody": {
     "required": false,
     "description": "A JSON object; an empty body is an empty document, as the reference server takes it.",
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewDocument"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The new document.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Document"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "409": {
      "$ref": "#/components/responses/Conflict"
     },
     "413": {
      "$ref": "#/components/responses/TooLarge"
     },
     "415": {
      "$ref": "#/components/responses/UnsupportedMediaType"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "delete": {
    "operationId": "deleteLocation",
    "summary": "Delete a place.",
    "parameters": [
     {
      "$ref": "#/components/parameters/Entity"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "responses": {
     "200": {
      "description": "Deleted.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Deleted"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "head": {
    "operationId": "headLocation",
    "summary": "The headers getLocation would send, without the body.",
    "parameters": [
     {
      "$ref": "#/components/parameters/Entity"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The document (JSON); or, when there is none, an empty `text/plain` body, as the reference answers a missing document (an empty 200; the type lets a typed client tell the two apart).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "description": "The request is malformed: a bad id, query, parameter or body."
     },
     "500": {
      "description": "A fault of the server's (the database refused what it should not have)."
     },
     "503": {
      "description": "The database cannot answer now (an election, a stalled or unreachable database).",
      "headers": {
       "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "504": {
      "description": "The query took longer than the server's limit."
     }
    }
   }
  },
  "/{collection}": {
   "get": {
    "operationId": "listDocuments",
    "summary": "Documents of a collection (at most the server's cap).",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     },
     {
      "$ref": "#/components/parameters/List_query"
     },
     {
      "$ref": "#/components/parameters/List_limit"
     },
     {
      "$ref": "#/components/parameters/List_skip"
     },
     {
      "$ref": "#/components/parameters/List_after"
     },
     {
      "$ref": "#/components/parameters/List_sort"
     },
     {
      "$ref": "#/components/parameters/List_fields"
     },
     {
      "$ref": "#/components/parameters/List_format"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "Documents (JSON), or an HTML table (a browser).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "X-Results-Truncated": {
        "schema": {
         "type": "string"
        }
       },
       "Link": {
        "description": "`<…&after=ID>; rel=\"next\"` (RFC 8288) when the page was cut at `limit` or the server's cap, in `_id` order.",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Document"
         }
        }
       },
       "text/html": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     },
     "504": {
      "$ref": "#/components/responses/QueryTimeout"
     }
    }
   },
   "post": {
    "operationId": "createDocument",
    "summary": "Insert a document (adds created_at).",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "requestBody": {
     "required": false,
     "description": "A JSON object; an empty body is an empty document, as the reference server takes it.",
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewDocument"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "The stored document.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Created"
        }
       }
      },
      "links": {
       "GetDocument": {
        "operationId": "getDocument",
        "parameters": {
         "collection": "$request.path.collection",
         "entity": "$response.body#/_id"
        }
       },
       "ReplaceDocument": {
        "operationId": "replaceDocument",
        "parameters": {
         "collection": "$request.path.collection",
         "entity": "$response.body#/_id"
        }
       },
       "DeleteDocument": {
        "operationId": "deleteDocument",
        "parameters": {
         "collection": "$request.path.collection",
         "entity": "$response.body#/_id"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "409": {
      "$ref": "#/components/responses/Conflict"
     },
     "413": {
      "$ref": "#/components/responses/TooLarge"
     },
     "415": {
      "$ref": "#/components/responses/UnsupportedMediaType"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "head": {
    "operationId": "headDocuments",
    "summary": "The headers listDocuments would send, without the body.",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     },
     {
      "$ref": "#/components/parameters/List_query"
     },
     {
      "$ref": "#/components/parameters/List_limit"
     },
     {
      "$ref": "#/components/parameters/List_skip"
     },
     {
      "$ref": "#/components/parameters/List_after"
     },
     {
      "$ref": "#/components/parameters/List_sort"
     },
     {
      "$ref": "#/components/parameters/List_fields"
     },
     {
      "$ref": "#/components/parameters/List_format"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "Documents (JSON), or an HTML table (a browser).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       },
       "X-Results-Truncated": {
        "schema": {
         "type": "string"
        }
       },
       "Link": {
        "description": "`<…&after=ID>; rel=\"next\"` (RFC 8288) when the page was cut at `limit` or the server's cap, in `_id` order.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "description": "The request is malformed: a bad id, query, parameter or body."
     },
     "500": {
      "description": "A fault of the server's (the database refused what it should not have)."
     },
     "503": {
      "description": "The database cannot answer now (an election, a stalled or unreachable database).",
      "headers": {
       "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "504": {
      "description": "The query took longer than the server's limit."
     }
    }
   }
  },
  "/{collection}/{entity}": {
   "get": {
    "operationId": "getDocument",
    "summary": "One document; an empty 200 when there is none (as the reference).",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     },
     {
      "$ref": "#/components/parameters/Entity"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The document (JSON); or, when there is none, an empty `text/plain` body, as the reference answers a missing document (an empty 200; the type lets a typed client tell the two apart).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Document"
        }
       },
       "text/plain": {
        "schema": {
         "type": "string",
         "maxLength": 0
        }
       }
      }
     },
     "304": {
      "$ref": "#/components/responses/NotModified"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     },
     "504": {
      "$ref": "#/components/responses/QueryTimeout"
     }
    }
   },
   "put": {
    "operationId": "replaceDocument",
    "summary": "Replace a document (adds updated_at).",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     },
     {
      "$ref": "#/components/parameters/Entity"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "requestBody": {
     "required": false,
     "description": "A JSON object; an empty body is an empty document, as the reference server takes it.",
     "content": {
      "application/json": {
       "schema": {
        "$ref": "#/components/schemas/NewDocument"
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The new document.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Document"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "409": {
      "$ref": "#/components/responses/Conflict"
     },
     "413": {
      "$ref": "#/components/responses/TooLarge"
     },
     "415": {
      "$ref": "#/components/responses/UnsupportedMediaType"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "delete": {
    "operationId": "deleteDocument",
    "summary": "Delete a document.",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     },
     {
      "$ref": "#/components/parameters/Entity"
     }
    ],
    "security": [
     {},
     {
      "writeToken": []
     }
    ],
    "responses": {
     "200": {
      "description": "Deleted.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Deleted"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/Unauthorized"
     },
     "500": {
      "$ref": "#/components/responses/ServerError"
     },
     "503": {
      "$ref": "#/components/responses/Unavailable"
     }
    }
   },
   "head": {
    "operationId": "headDocument",
    "summary": "The headers getDocument would send, without the body.",
    "parameters": [
     {
      "$ref": "#/components/parameters/Collection"
     },
     {
      "$ref": "#/components/parameters/Entity"
     },
     {
      "$ref": "#/components/parameters/Header_IfNoneMatch_Body"
     }
    ],
    "responses": {
     "200": {
      "description": "The document (JSON); or, when there is none, an empty `text/plain` body, as the reference answers a missing document (an empty 200; the type lets a typed client tell the two apart).",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "304": {
      "description": "Not modified: the If-None-Match tag is this answer's.",
      "headers": {
       "ETag": {
        "description": "A weak validator of the body (Express's own).",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "description": "The request is malformed: a bad id, query, parameter or body."
     },
     "500": {
      "description": "A fault of the server's (the database refused what it should not have)."
     },
     "503": {
      "description": "The database cannot answer now (an election, a stalled or unreachable database).",
      "headers": {
       "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "504": {
      "description": "The query took longer than the server's limit."
     }
    }
   }
  }
 }
}
"""#

    static let bytes = Array(json.utf8)
}
