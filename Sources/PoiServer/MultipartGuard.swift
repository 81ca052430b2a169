import NIOCore

/// Walks a multipart body alongside multipart-kit's `MultipartParser`, so that a byte the parser
/// would trap on is a client error instead of a crash of the whole server.
///
/// Why this exists: multipart-kit 4.7.1 (the only release on these machines) looks a header-name
/// byte up in a 128-entry table, so any byte ≥ 0x80 where a part's header name is expected
/// (`--B\r\n\xc2…`, a non-ASCII header name) indexes past its end and kills the process; a
/// `do/catch` cannot stop a trap. The parser's state is private, so this mirrors its state
/// machine (preamble, boundary matching, header lines, body) byte for byte on the same chunks,
/// and refuses the chunk before the parser sees it. On inputs the parser refuses with a syntax
/// error the mirror need not agree: the request fails either way. Header values keep any bytes
/// (browsers send UTF-8 filenames raw), as the parser does.
struct MultipartGuard {
    private enum State {
        case preamble(Int)
        case preHeaders(expectingLF: Bool)
        case headerName(empty: Bool)
        case headerValue
        case postHeaderValue
        case postHeaders
        case body
        case boundary(Int)
        case epilogue
    }

    private let boundary: [UInt8]
    private var state = State.preamble(0)

    init(boundary: String) {
        self.boundary = Array("\r\n--\(boundary)".utf8)
    }

    /// Follows `chunk`; false when the parser would reach a byte it cannot look up.
    mutating func admits(_ chunk: ByteBuffer) -> Bool {
        let view = chunk.readableBytesView
        var i = view.startIndex
        let cr: UInt8 = 0x0D
        while i < view.endIndex {
            switch state {
            case .epilogue:
                return true
            case .body:
                // Everything up to a CR is body; a CR may start a boundary (not consumed here).
                guard let next = view[i...].firstIndex(of: cr) else { return true }
                i = next
                state = .boundary(0)
                continue
            case .preamble(var matched):
                let byte = view[i]
                if matched == 0 && byte == boundary[2] { matched = 3 }
                else if byte == boundary[matched] { matched += 1 }
                else if matched > 0 && byte == boundary[0] { matched = 1 }
                else { matched = 0 }
                state = matched >= boundary.count ? .preHeaders(expectingLF: false) : .preamble(matched)
            case .boundary(let matched):
                let byte = view[i]
                if matched >= boundary.count {
                    state = byte == cr ? .preHeaders(expectingLF: true) : .epilogue
                } else if byte != boundary[matched] {
                    // Not consumed again by the parser: a CR restarts the match at 1, else body.
                    state = byte == boundary[0] ? .boundary(1) : .body
                } else {
                    state = .boundary(matched + 1)
                }
            case .preHeaders(let expectingLF):
                state = expectingLF ? .headerName(empty: true) : .preHeaders(expectingLF: true)
            case .headerName(let empty):
                let byte = view[i]
                if byte == 0x3A && !empty { state = .headerValue }
                else if byte == cr && empty { state = .postHeaders }
                else if byte >= 0x80 { return false }
                else { state = .headerName(empty: false) }
            case .headerValue:
                if view[i] == cr { state = .postHeaderValue }
            case .postHeaderValue:
                state = .headerName(empty: true)
            case .postHeaders:
                state = .body
            }
            i += 1
        }
        return true
    }
}
