import CMongoC

/// A BSON Decimal128 (IEEE 754-2008 decimal128, 34 significant digits): how PoiKit stores an
/// integer beyond Int64 exactly (a double would round `12345678901234567890`). The text
/// conversions are libbson's own, so the value is what every driver reads back.
public struct BSONDecimal128: Hashable, Sendable, CustomStringConvertible {
    /// The 64 low-order bits (the end of the coefficient), as BSON stores them first.
    public var low: UInt64
    /// Sign, combination bits, exponent and the start of the coefficient.
    public var high: UInt64

    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The exact value of decimal text (`12345678901234567890`, `-1.5`, `1E+3`); nil when the
    /// text is not a number or needs more than 34 significant digits (libbson refuses to round).
    public init?(exactly text: String) {
        var value = bson_decimal128_t()
        guard bson_decimal128_from_string(text, &value) else { return nil }
        // libbson answers NaN for text it cannot read; only the text "NaN" may mean it.
        let nan = (value.high >> 58) & 0x1F == 0x1F
        if nan && text != "NaN" { return nil }
        self.init(low: value.low, high: value.high)
    }

    /// libbson's text for the value: plain digits for an integer stored with exponent 0
    /// (`12345678901234567890`), scientific notation where the BSON spec asks for it.
    public var description: String {
        var value = bson_decimal128_t()
        value.low = low
        value.high = high
        var buffer = [CChar](repeating: 0, count: Int(BSON_DECIMAL128_STRING))
        bson_decimal128_to_string(&value, &buffer)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The value's text when it is an integer written without exponent (`-?[0-9]+`): what a
    /// JSON integer becomes again; nil for fractions, exponents, NaN and infinities.
    public var integerText: String? {
        let text = description
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return text
    }
}
