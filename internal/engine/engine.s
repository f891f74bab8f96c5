// The functions declared without a body in this package are provided by
// vm and maps through //go:linkname (see doc.go); this file lets the
// compiler accept the declarations.
