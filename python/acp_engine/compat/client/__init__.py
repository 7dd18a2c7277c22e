from .connection import ClientSideConnection

__all__ = ["ClientSideConnection"]
