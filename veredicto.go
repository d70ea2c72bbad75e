// Package veredicto is the project's vocabulary: the names that cross Go, ASL
// and SAM and that every other package imports. It holds the error kinds whose
// names Step Functions Retry and Catch match in ErrorEquals, with one
// ErrorName that walks an error's chain. It depends on nothing but the
// standard library: no AWS, no HTTP, no storage.
package veredicto
