module github.com/acp-engine/acp-engine/bench/go

go 1.21

require github.com/acp-engine/acp-engine/go v0.0.0

require github.com/goccy/go-json v0.10.5 // indirect

replace github.com/acp-engine/acp-engine/go => ../../go
