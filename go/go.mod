module github.com/acp-engine/acp-engine/go

go 1.21

require github.com/goccy/go-json v0.10.5
