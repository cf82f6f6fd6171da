"""The typer application behind ``python -m spacy_mimick`` (the commands live in this package's other modules).

Help is plain click text, not typer's Rich panels: at 80 columns the panels of ``train`` left
its help column 23 characters wide, cut ``spacy_mimick.MimickNgram.v1`` to
"spacy_mimick.MimickNgr…" and kept the docstrings' line breaks inside re-wrapped paragraphs.
Click's formatter re-wraps each paragraph to the terminal (at most 80 columns) and never cuts.
"""
from typing import List, Optional, Type

import typer
from typer.core import TyperCommand


class Command(TyperCommand):
    """A command that names its arguments VECTORS_PATH OUTPUT_DIR [WORDS]... in its usage line,
    help and errors, as its docstring does.

    typer 0.29 writes ``{vectors_path} {output_dir}`` in the usage line, which reads like a
    template placeholder left unfilled, and ``vectors_path <str>`` in the help.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.param_type_name == "argument" and param.metavar is None:
                param.metavar = param.name.upper()  # also what "Missing argument ..." names

    @staticmethod
    def _argument(param) -> str:
        return param.metavar + ("..." if param.nargs != 1 else "")

    def collect_usage_pieces(self, ctx) -> List[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = self._argument(param)
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx, formatter) -> None:
        args, opts = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":  # the name alone, not "NAME NAME" or "<str>"
                args.append((self._argument(param), record[1]))
            else:
                opts.append(record)
        for title, rows in (("Arguments", args), ("Options", opts)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class _Typer(typer.Typer):
    """``@app.command`` makes a :class:`Command` unless told otherwise."""

    def command(self, *args, cls: Optional[Type[TyperCommand]] = None, **kwargs):
        return super().command(*args, cls=cls or Command, **kwargs)


app = _Typer(
    name="spacy-mimick",
    help="MIMICK: word vectors for out-of-vocabulary words, predicted from their spelling.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
