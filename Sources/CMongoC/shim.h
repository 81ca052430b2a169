#include <mongoc/mongoc.h>
#include <bson/bson.h>
