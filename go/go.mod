module github.com/acp-engine/acp-engine/go

go 1.23

require (
	github.com/goccy/go-json v0.10.5
	github.com/segmentio/encoding v0.5.4
)

require (
	github.com/segmentio/asm v1.1.3 // indirect
	golang.org/x/sys v0.0.0-20211110154304-99a53858aa08 // indirect
)
