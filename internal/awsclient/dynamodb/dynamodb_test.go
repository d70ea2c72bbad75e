package dynamodb_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto/internal/awsclient/awsclienttest"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	storedynamo "github.com/veredicto/veredicto/internal/store/dynamo"
)

// API is what both clients answer.
type API interface {
	storedynamo.API
	storedynamo.EraseAPI
}

var (
	_ API = (*dynamodb.Client)(nil)
	_ API = (*awsddb.Client)(nil)
)

func ok(body string) awsclienttest.Answer {
	return awsclienttest.Answer{Status: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"R1"}}, Body: body}
}

func fail(status int, body string) awsclienttest.Answer {
	a := ok(body)
	a.Status = status
	return a
}

func TestSameAsTheSDK(t *testing.T) {
	s := awsclienttest.Start(t)
	ac := s.Config("")
	ours, err := dynamodb.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	sdk := awsddb.NewFromConfig(ac)
	item := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a#b"}, "sk": &types.AttributeValueMemberS{Value: "1"},
		"n": &types.AttributeValueMemberN{Value: "42"}, "b": &types.AttributeValueMemberB{Value: []byte{0, 1}}, "ok": &types.AttributeValueMemberBOOL{Value: true},
		"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}}},
		"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberSS{Value: []string{"p", "q"}}}},
		"no": &types.AttributeValueMemberBOOL{Value: false}, "e": &types.AttributeValueMemberS{Value: ""}, "ns": &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}, "el": &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		"em": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}
	key := map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]}
	const itemJSON = `{"pk":{"S":"a#b"},"sk":{"S":"1"},"n":{"N":"42"},"b":{"B":"AAE="},"ok":{"BOOL":true},"l":{"L":[{"NULL":true}]},"m":{"M":{"x":{"SS":["p","q"]}}},
		"no":{"BOOL":false},"e":{"S":""},"ns":{"NS":["1","2.5"]},"bs":{"BS":["AQ==","AgM="]},"el":{"L":[]},"em":{"M":{}}}`
	awsclienttest.Compare(t, s, API(sdk), API(ours), []string{"Content-Type", "X-Amz-Target"}, []awsclienttest.Case[API]{
		{Name: "GetItem", Answer: ok(`{"Item":` + itemJSON + `}`), Call: func(ctx context.Context, c API) (any, error) {
			return c.GetItem(ctx, &awsddb.GetItemInput{TableName: aws.String("t"), Key: key, ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("#d"),
				ExpressionAttributeNames: map[string]string{"#d": "doc"}})
		}},
		{Name: "GetItem missing", Answer: ok(`{}`), Call: func(ctx context.Context, c API) (any, error) {
			return c.GetItem(ctx, &awsddb.GetItemInput{TableName: aws.String("t"), Key: key})
		}},
		{Name: "PutItem", Answer: ok(`{}`), Call: func(ctx context.Context, c API) (any, error) {
			return c.PutItem(ctx, &awsddb.PutItemInput{TableName: aws.String("t"), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
		}},
		{Name: "PutItem condition failed", Answer: fail(400, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed","Item":`+itemJSON+`}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.PutItem(ctx, &awsddb.PutItemInput{TableName: aws.String("t"), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
			}},
		{Name: "PutItem throttled", Answer: fail(400, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.PutItem(ctx, &awsddb.PutItemInput{TableName: aws.String("t"), Item: item})
			}},
		{Name: "PutItem unmodelled", Answer: fail(400, `{"__type":"com.amazon.coral.validate#ValidationException","message":"bad"}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.PutItem(ctx, &awsddb.PutItemInput{TableName: aws.String("t"), Item: item})
			}},
		{Name: "PutItem 500", Answer: fail(500, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"oops"}`),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.PutItem(ctx, &awsddb.PutItemInput{TableName: aws.String("t"), Item: item})
			}},
		{Name: "PutItem 503 no body", Answer: fail(503, ``),
			Call: func(ctx context.Context, c API) (any, error) {
				return c.PutItem(ctx, &awsddb.PutItemInput{TableName: aws.String("t"), Item: item})
			}},
		{Name: "Query", Answer: ok(`{"Items":[` + itemJSON + `],"Count":1,"ScannedCount":3,"LastEvaluatedKey":{"pk":{"S":"a#b"},"sk":{"S":"1"}}}`),
			Call: func(ctx context.Context, c API) (any, error) {
				values := map[string]types.AttributeValue{":p": item["pk"], ":s": &types.AttributeValueMemberS{Value: "x"}}
				return c.Query(ctx, &awsddb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :s)"),
					ExpressionAttributeValues: values, ExclusiveStartKey: key, Limit: aws.Int32(25), ScanIndexForward: aws.Bool(false), FilterExpression: aws.String("n > :p")})
			}},
		{Name: "UpdateItem", Answer: ok(`{"Attributes":{"n":{"N":"43"}}}`), Call: func(ctx context.Context, c API) (any, error) {
			return c.UpdateItem(ctx, &awsddb.UpdateItemInput{TableName: aws.String("t"), Key: key, UpdateExpression: aws.String("ADD n :one"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}, ReturnValues: types.ReturnValueUpdatedNew})
		}},
		{Name: "DeleteItem", Answer: ok(`{}`), Call: func(ctx context.Context, c API) (any, error) {
			return c.DeleteItem(ctx, &awsddb.DeleteItemInput{TableName: aws.String("t"), Key: key})
		}},
	})
}
