module github.com/acp-engine/acp-engine/bench/go

go 1.19

require github.com/acp-engine/acp-engine/go v0.0.0

replace github.com/acp-engine/acp-engine/go => ../../go
