module github.com/veredicto/veredicto

go 1.26.8

require (
	github.com/aws/aws-lambda-go v1.55.1 // indirect
	github.com/ohler55/ojg v1.28.5 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
