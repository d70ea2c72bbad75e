package starter

// EndpointEnv names the variable that points local runs at a Step Functions
// API endpoint (`veredicto serve`): when it is set, the S3 trigger and
// POST /searches start executions there with the sfn client, the same code
// path as on AWS, instead of running them in-process.
const EndpointEnv = "VEREDICTO_SFN_ENDPOINT"

// LocalRegion is the region of the ARNs `veredicto serve` hands out.
const LocalRegion = "us-east-1"
