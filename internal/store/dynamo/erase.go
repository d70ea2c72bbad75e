package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto/internal/awsretry"
)

// EraseAPI is the part of the DynamoDB client Eraser uses.
type EraseAPI interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var _ EraseAPI = (*dynamodb.Client)(nil)

// Eraser removes records from the table for good (the right to erasure;
// veredicto audit purge): nothing else in the project deletes.
type Eraser struct {
	Client EraseAPI
	Table  string
	// Large erases a value kept out of its item (its key in the large
	// store); nil leaves such values where they are.
	Large func(ctx context.Context, key string) (int, error)
}

// Erase removes the record key and every record under key/, with their
// large values, and returns how many records it removed. key names at
// least a partition ("stage/<tenant>": all of it).
func (e *Eraser) Erase(ctx context.Context, key string) (int, error) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" || parts[0] == usageNamespace {
		return 0, fmt.Errorf("dynamo erase %q: the key must name at least a partition (\"stage/<tenant>\"), outside %s/", key, usageNamespace)
	}
	pk := parts[0] + "/" + parts[1]
	in := &dynamodb.QueryInput{
		TableName:                aws.String(e.Table),
		KeyConditionExpression:   aws.String("pk = :pk"),
		ExpressionAttributeNames: map[string]string{"#sk": "sk", "#ref": "ref"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
		},
		ProjectionExpression: aws.String("#sk, #ref"),
		ConsistentRead:       aws.Bool(true),
	}
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
		in.KeyConditionExpression = aws.String("pk = :pk AND begins_with(#sk, :rest)")
		in.ExpressionAttributeValues[":rest"] = &types.AttributeValueMemberS{Value: rest}
	}
	n := 0
	p := dynamodb.NewQueryPaginator(e.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("dynamo erase %s: %w", key, awsretry.Classify(err))
		}
		for _, it := range page.Items {
			sk, ok := it["sk"].(*types.AttributeValueMemberS)
			if !ok || rest != "" && sk.Value != rest && !strings.HasPrefix(sk.Value, rest+"/") {
				continue // "s-10/…" shares the prefix of "s-1"
			}
			if _, err := e.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.Table), Key: itemKey(pk, sk.Value)}); err != nil {
				return n, fmt.Errorf("dynamo erase %s/%s: %w", pk, sk.Value, awsretry.Classify(err))
			}
			n++
			if ref, ok := it["ref"].(*types.AttributeValueMemberS); ok && e.Large != nil {
				if _, err := e.Large(ctx, ref.Value); err != nil {
					return n, fmt.Errorf("dynamo erase %s/%s: its large value: %w", pk, sk.Value, err)
				}
			}
		}
	}
	return n, nil
}
