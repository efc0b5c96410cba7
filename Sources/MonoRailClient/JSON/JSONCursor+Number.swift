// Numbers: read as the parser reads them, exact integers kept exact and the rest the nearest double.
extension JSONCursor {
    package mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = offset
        var isNegative = false
        if current == UInt8(ascii: "-") {
            isNegative = true
            offset += 1
        }
        guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw error("expected a digit")
        }
        var isInteger = true
        // Accumulate negatively so that Int64.min parses without overflow.
        var accumulator: Int64 = 0
        var overflow = false
        if first == UInt8(ascii: "0") {
            offset += 1
            if let next = current, next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                throw error("leading zeros are not allowed")
            }
        } else {
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if !overflow {
                    let (times, o1) = accumulator.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                    overflow = o1 || o2
                    accumulator = next
                }
                offset += 1
            }
        }
        let integerEnd = offset
        var fractionEnd = offset
        var exponent = 0
        if current == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw error("expected a digit after '.'")
            }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { offset += 1 }
            fractionEnd = offset
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            var exponentSign = 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                if current == UInt8(ascii: "-") { exponentSign = -1 }
                offset += 1
            }
            guard let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw error("expected a digit in the exponent")
            }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                // Past a million the exponent's size no longer changes the value; capping keeps it from overflowing.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(byte - UInt8(ascii: "0")) }
                offset += 1
            }
            exponent *= exponentSign
        }
        if isInteger && !overflow {
            if isNegative { return .int(accumulator) }
            if accumulator != .min { return .int(-accumulator) }
        }
        if !isInteger,
            let exact = exactInteger(
                digits: (isNegative ? start + 1 : start)..<integerEnd, fraction: integerEnd..<fractionEnd,
                exponent: exponent, isNegative: isNegative)
        {
            return exact
        }
        if !isInteger,
            let fast = nearestDouble(
                digits: (isNegative ? start + 1 : start)..<integerEnd, fraction: integerEnd..<fractionEnd,
                exponent: exponent)
        {
            return .double(isNegative ? -fast : fast)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, !isNegative, let unsigned = UInt64(text) {
            return .uint(unsigned)
        }
        guard let double = Double(text), double.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "number out of range")
        }
        return .double(double)
    }

    /// The `Double` nearest a literal's magnitude when it has at most 19 significant digits, their
    /// value is at most 2^53 and its power of ten is within ±22: then both are exact `Double`s and
    /// one multiplication or division rounds correctly (Clinger's fast path), as `Double(String)`
    /// would. `nil` otherwise, and the caller asks `Double(String)`.
    private func nearestDouble(digits: Range<Int>, fraction: Range<Int>, exponent: Int) -> Double? {
        let fractionDigits = fraction.isEmpty ? fraction : (fraction.lowerBound + 1)..<fraction.upperBound
        var significand: UInt64 = 0
        var count = 0
        func accumulate(_ range: Range<Int>) -> Bool {
            for index in range {
                let digit = UInt64(bytes[index] - UInt8(ascii: "0"))
                // Leading zeros are not significant.
                if count == 0 && digit == 0 { continue }
                count += 1
                guard count <= 19 else { return false }
                significand = significand * 10 + digit
            }
            return true
        }
        guard accumulate(digits), accumulate(fractionDigits), significand <= 1 << 53 else { return nil }
        let scale = exponent - fractionDigits.count
        guard (-22...22).contains(scale) else { return nil }
        let power = Self.powersOfTen[abs(scale)]
        return scale < 0 ? Double(significand) / power : Double(significand) * power
    }

    /// 10^0 … 10^22, each exact in a `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// The integer a literal with a fraction or an exponent spells exactly, such as `1.0` or `25e2`, when
    /// it fits in 64 bits; `nil` when the literal is not a whole number (`99e-99999999999` is not,
    /// though its nearest `Double` is 0) or does not fit. So integer fields accept exactly the
    /// literals whose value is an integer, and a `.double` never stands for one.
    private func exactInteger(digits: Range<Int>, fraction: Range<Int>, exponent: Int, isNegative: Bool) -> JSONValue? {
        // The fraction range starts at the '.', so its digits begin one byte later.
        let fractionDigits = fraction.isEmpty ? fraction : (fraction.lowerBound + 1)..<fraction.upperBound
        var scale = exponent - fractionDigits.count
        // Trailing zeros, in the fraction and then in the integer part, only raise the scale.
        var end = fractionDigits.isEmpty ? digits.upperBound : fractionDigits.upperBound
        var inFraction = !fractionDigits.isEmpty
        while true {
            let lower = inFraction ? fractionDigits.lowerBound : digits.lowerBound
            if end > lower, bytes[end - 1] == UInt8(ascii: "0") {
                end -= 1
                scale += 1
            } else if inFraction && end == lower {
                inFraction = false
                end = digits.upperBound
            } else {
                break
            }
        }
        // With trailing zeros gone the last digit left is not zero, so a negative scale means a
        // fraction (the common case, `46.8`, decided here without reading the digits again).
        if scale < 0 { return inFraction || end > digits.lowerBound ? nil : .int(0) }
        var magnitude: UInt64 = 0
        var overflow = false
        func append(_ range: Range<Int>) {
            for index in range {
                let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (next, o2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                magnitude = next
            }
        }
        if inFraction {
            append(digits)
            append(fractionDigits.lowerBound..<end)
        } else {
            append(digits.lowerBound..<end)
        }
        if magnitude == 0 && !overflow { return .int(0) }
        guard !overflow, scale <= 20 else { return nil }
        for _ in 0..<scale {
            let (next, o) = magnitude.multipliedReportingOverflow(by: 10)
            guard !o else { return nil }
            magnitude = next
        }
        if isNegative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return .int(Int64(truncatingIfNeeded: 0 &- magnitude))
        }
        return magnitude <= UInt64(Int64.max) ? .int(Int64(magnitude)) : .uint(magnitude)
    }
}
