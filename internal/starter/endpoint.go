package starter

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// EndpointEnv names the variable that points local runs at a Step Functions
// API endpoint (`veredicto serve`): when it is set, the S3 trigger and
// POST /searches start executions there with the sfn client, the same code
// path as on AWS, instead of running them in-process.
const EndpointEnv = "VEREDICTO_SFN_ENDPOINT"

// LocalRegion is the region of the ARNs `veredicto serve` hands out.
const LocalRegion = "us-east-1"

// NewEndpoint returns a starter for the state machine stateMachineARN on the
// Step Functions API at endpoint (e.g. http://127.0.0.1:8080). The local
// server takes any credentials; static placeholders keep the SDK from
// looking for real ones.
func NewEndpoint(endpoint, stateMachineARN string) *SFN {
	client := sfn.New(sfn.Options{
		Region:       LocalRegion,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	return NewSFN(client, stateMachineARN)
}
