package sfnapi

// testdata/operations.json lists every operation of the Step Functions API
// as botocore's model defines it (TestEveryOperation drives each one).
//go:generate python3 ../../scripts/sfn-operations.py testdata/operations.json
