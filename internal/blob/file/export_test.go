package file

// MaxRefusals is maxRefusals, for the tests of package file_test.
const MaxRefusals = maxRefusals
