/// The OpenAPI 3.1 description of `poi serve`'s API, served at `GET /openapi.json`: every route,
/// parameter, request body, response (status, headers, schema), the write-token scheme and the
/// links between operations.
///
/// It is data, kept as a file (`Resources/openapi.json`) and compiled into the binary
/// (`.embedInCode`), so `poi serve` stays a single file with nothing to install beside it. The
/// document is also the server's route table: `APIRoutes` binds a handler to each of its
/// operations by `operationId`, the 405s take their `Allow` from it (`DocumentedOperations`),
/// and schemathesis (`make api-fuzz`, in CI) checks the live server against it.
enum OpenAPIDocument {
    static let bytes: [UInt8] = PackageResources.openapi_json
}
