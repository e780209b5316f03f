import AmodbBytes
import AmodbModels
import Glibc

/// `RouteTable` compiled once for reading a request's bytes: one flat byte program, read as
/// a `Span`, so that matching a path, checking a parameter and writing a path with an id
/// retain nothing and allocate nothing (the table's entries are classes and arrays: every
/// request walking them would retain each).
extension RouteRequest {
    /// Per entry, in the table's order: its kind, then its parts, then `end`. A part is
    /// `literal`, a length and the bytes, or one of the placeholders' codes.
    static let program: [UInt8] = {
        var program: [UInt8] = []
        for entry in RouteTable.entries {
            program.append(UInt8(entry.kind.rawValue))
            for part in entry.parts {
                switch part {
                case .literal(let bytes):
                    precondition(bytes.count < 256, "a template's fixed run fits a byte's count")
                    program += [Code.literal, UInt8(bytes.count)] + bytes
                case .placeholder(.id): program.append(Code.id)
                case .placeholder(.mediaType): program.append(Code.mediaType)
                case .placeholder(.timeWindow): program.append(Code.timeWindow)
                }
            }
            program.append(Code.end)
        }
        return program
    }()

    /// The program's codes.
    enum Code {
        static let literal: UInt8 = 0xF0
        static let id: UInt8 = 0xF1
        static let mediaType: UInt8 = 0xF2
        static let timeWindow: UInt8 = 0xF3
        static let end: UInt8 = 0xFF
    }

    /// Per kind, the parameters it takes, a bit each (`bit(of:)`).
    static let parameterBits: [UInt8] = RouteTable.entries.map { entry in
        entry.parameters.reduce(0) { $0 | bit(of: $1) }
    }

    /// Whether a route of `kind` takes `parameter`.
    static func takes(_ kind: Route.Kind, _ parameter: QueryParameter) -> Bool {
        parameterBits[kind.rawValue] & bit(of: parameter) != 0
    }

    /// Per kind, where the fixed bytes before its id are in `program` (an empty range for a
    /// kind without an id): a path with an id is those bytes and the id.
    static let idPrefixes: [Range<Int>] = {
        var prefixes = Array(repeating: 0..<0, count: RouteTable.entries.count)
        var position = 0
        for entry in RouteTable.entries {
            position += 1  // the kind
            var prefix = 0..<0
            for part in entry.parts {
                switch part {
                case .literal(let bytes):
                    prefix = (position + 2)..<(position + 2 + bytes.count)
                    position += 2 + bytes.count
                case .placeholder(.id):
                    precondition(
                        entry.parts.count == 2 && prefix.count > 0, "a template with an id is fixed bytes and the id")
                    prefixes[entry.kind.rawValue] = prefix
                    position += 1
                case .placeholder: position += 1
                }
            }
            position += 1  // the end
        }
        return prefixes
    }()

    /// The route the program's first entry that a path's bytes match names, if any.
    static func route(program code: UnsafeBufferPointer<UInt8>, path: UnsafeBufferPointer<UInt8>) -> Route? {
        var pc = 0
        while pc < code.count {
            let kind = Route.Kind(rawValue: Int(code[pc]))!
            pc += 1
            var position = 0
            var matched = true
            var (id, media, window): (Int?, MediaType?, TimeWindow?) = (nil, nil, nil)
            while matched, code[pc] != Code.end {
                let op = code[pc]
                if op == Code.literal {
                    let count = Int(code[pc + 1])
                    matched =
                        path.count - position >= count
                        && memcmp(path.baseAddress! + position, code.baseAddress! + pc + 2, count) == 0
                    position += count
                    pc += 2 + count
                    continue
                }
                var end = position
                while end < path.count, path[end] != UInt8(ascii: "/") { end += 1 }
                let segment = UnsafeBufferPointer(rebasing: path[position..<end]).span
                switch op {
                case Code.id:
                    id = positiveInteger(segment)
                    matched = id != nil
                case Code.mediaType:
                    media = mediaType(segment)
                    matched = media != nil
                default:
                    window = timeWindow(segment)
                    matched = window != nil
                }
                position = end
                pc += 1
            }
            if matched, position == path.count {
                return Route(kind: kind, id: id, media: media, window: window)
            }
            // To the next entry.
            while code[pc] != Code.end {
                pc += code[pc] == Code.literal ? 2 + Int(code[pc + 1]) : 1
            }
            pc += 1
        }
        return nil
    }
}
