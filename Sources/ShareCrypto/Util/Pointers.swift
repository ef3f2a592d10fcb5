// C APIs here take non-null pointers even for empty inputs, and an empty Swift buffer has none:
// these accessors hand out a pointer to one private zero byte instead.
nonisolated(unsafe) private let emptyByte: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}()

extension UnsafeRawBufferPointer {
    var u8: UnsafePointer<UInt8> {
        baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafePointer(emptyByte)
    }
    var i8: UnsafePointer<CChar> { UnsafeRawPointer(u8).assumingMemoryBound(to: CChar.self) }
}

extension UnsafeMutableRawBufferPointer {
    var u8: UnsafeMutablePointer<UInt8> { baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) } ?? emptyByte }
}
