// The file layer (`StoreFileSystem`, `POSIXFileSystem`) lives in its own target so that the XML
// store does its I/O through the same layer; the binary store's users keep seeing it here.
@_exported import CoreDataFileSystem
