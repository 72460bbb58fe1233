"""Pure parsers: text in, frozen dataclasses out. Standard library only."""

from collectors.parsers.innodb_status import (
    PARSER_VERSION,
    InnodbStatus,
    ParseError,
    parse_innodb_status,
    status_to_dict,
)

__all__ = ["PARSER_VERSION", "InnodbStatus", "ParseError", "parse_innodb_status", "status_to_dict"]
