"""User-facing errors: printed as `enzyme-cc: error: ...` with a non-zero exit, never a traceback."""


class UserError(Exception):
    """An error the user can act on. The message is printed verbatim after `error: `."""

    def __init__(self, message: str, exit_code: int = 1, more: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.more = more or []      # further errors of the same step, each printed as one
