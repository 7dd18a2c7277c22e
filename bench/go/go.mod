module github.com/acp-engine/acp-engine/bench/go

go 1.23

require github.com/acp-engine/acp-engine/go v0.0.0

require (
	github.com/goccy/go-json v0.10.5 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	golang.org/x/sys v0.0.0-20211110154304-99a53858aa08 // indirect
)

replace github.com/acp-engine/acp-engine/go => ../../go
