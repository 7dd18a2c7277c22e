"""Generated from the schema by tools/codegen (make codegen); do not edit."""
