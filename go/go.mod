module github.com/acp-engine/acp-engine/go

go 1.19
