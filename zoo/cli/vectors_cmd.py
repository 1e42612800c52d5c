"""``zoo vectors similar|analogy|eval|export``: query and convert word vectors.

FILE is a zoo model file of an embedder (``zoo train NAME ... --out F``), a
word2vec text/binary or GloVe text file, or a file in a format a plugin reads
(format detected).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zoo.building.files import output_path
from zoo.naming.domains import argument_type
from zoo.training.recipes import add_alias, add_lowercase_arguments

__all__ = ["register"]

_count = argument_type("[1, inf)")
METHODS = ["3cosadd", "3cosmul"]
TEXT = "word2vec"
"""``--format``'s default: the core's exchange format (text, or ``--binary``)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vectors", help="query, evaluate and export word vectors (zoo, word2vec, GloVe, plugins' files)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    similar = actions.add_parser("similar", help="nearest words to the sum of positive minus negative words")
    _file(similar)
    similar.add_argument("words", nargs="+", help="positive words")
    similar.add_argument("--negative", nargs="*", default=[], help="words to subtract")
    _query_options(similar, topn=10)
    similar.set_defaults(run=run_similar)

    analogy = actions.add_parser("analogy", help="a : b :: c : ?  (b - a + c)")
    _file(analogy)
    analogy.add_argument("a")
    analogy.add_argument("b")
    analogy.add_argument("c")
    _query_options(analogy, topn=5)
    analogy.set_defaults(run=run_analogy)

    evaluate = actions.add_parser("eval", help="Google analogies and word-pair correlations")
    _file(evaluate)
    evaluate.add_argument("--analogies", nargs="*", default=["google"], help="analogy files or 'google'")
    word_pairs = evaluate.add_argument(
        "--word-pairs", nargs="*", default=["wordsim353", "simlex999"], help="word-pair files or shipped set names"
    )
    add_alias(evaluate, word_pairs, "--pairs")
    evaluate.add_argument("--restrict-vocab", type=_count, default=30000, help="analogies: most frequent words used")
    evaluate.add_argument("--method", choices=METHODS, default="3cosadd", help="analogy method")
    keep_case = add_lowercase_arguments(evaluate, default=True, what="the words of the test sets and the vectors")
    add_alias(evaluate, keep_case, "--case-sensitive")
    evaluate.add_argument("--sections", action="store_true", help="print per-section analogy accuracy")
    evaluate.set_defaults(run=run_eval)

    export = actions.add_parser("export", help="write the word2vec text (or --binary) format, or a plugin's format")
    _file(export)
    export.add_argument("out", type=output_path, help="output file (.gz compresses)")
    export.add_argument("--binary", action="store_true", help="word2vec's binary format")
    export.add_argument("--format", default=TEXT, metavar="FORMAT", help=_export_help())
    export.add_argument("--limit", type=_count, help="only the first (most frequent) words")
    export.set_defaults(run=run_export)


def _export_help() -> str:
    from zoo.naming.registry import Registry

    writable = {name: e for name, e in Registry.from_catalogue().formats.items() if e.writable}
    plugged = "; ".join(f"{name}: {e.summary}" for name, e in sorted(writable.items()))
    return f"{TEXT} (default): words and vectors" + (f"; {plugged}" if plugged else "") + "; or another plugin's"


def _file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="zoo model file, word2vec/GloVe text or binary file, or a plugin's")
    parser.add_argument(
        "--allow-nonfinite", action="store_true", help="read vectors holding NaN or infinity (never ranked)"
    )


def _query_options(parser: argparse.ArgumentParser, *, topn: int) -> None:
    n_best = parser.add_argument("--n-best", dest="topn", type=_count, default=topn, metavar="N", help="how many words")
    add_alias(parser, n_best, "--topn")
    parser.add_argument("--restrict-vocab", type=_count, help="search only the most frequent words")
    method = parser.add_argument("--method", choices=METHODS, default="3cosadd", help="3CosAdd or 3CosMul")
    cosmul = parser.add_argument("--cosmul", dest="method", action="store_const", const="3cosmul")
    _hide_as_alias(parser, cosmul, method)


def _hide_as_alias(parser: argparse.ArgumentParser, flag: argparse.Action, option: argparse.Action) -> None:
    """`flag` (``--cosmul``) stays for one release, hidden, as a spelling of one value of `option`."""
    flag.help = argparse.SUPPRESS
    add_alias(parser, flag)  # the warning names the option and value it stands for
    flag.deprecated = {s: f"{option.option_strings[0]} {flag.const}" for s in flag.option_strings}


def _load(args: argparse.Namespace):
    from zoo.vectors import KeyedVectors

    return KeyedVectors.load(args.file, allow_nonfinite=args.allow_nonfinite)


def _print_neighbours(results) -> None:
    for word, score in results:
        print(f"{score:8.4f}  {word}")


def _query(kv, args: argparse.Namespace, positive: list[str], negative: list[str]):
    from zoo.errors import DataError

    search = kv.most_similar_cosmul if args.method == "3cosmul" else kv.most_similar
    try:
        return search(positive, negative, topn=args.topn, restrict_vocab=args.restrict_vocab)
    except KeyError as error:
        raise DataError(error.args[0]) from None


def run_similar(args: argparse.Namespace) -> int:
    kv = _load(args)
    _print_neighbours(_query(kv, args, list(args.words), list(args.negative)))
    return 0


def run_analogy(args: argparse.Namespace) -> int:
    kv = _load(args)
    _print_neighbours(_query(kv, args, [args.b, args.c], [args.a]))
    return 0


def run_eval(args: argparse.Namespace) -> int:
    kv = _load(args)
    print(f"{args.file}: {len(kv)} words, dim {kv.vector_size}")
    for path in args.analogies:
        result = kv.analogy_report(
            path, restrict_vocab=args.restrict_vocab, case_insensitive=args.lowercase, method=args.method
        )
        print(
            f"analogies {path}: {100 * result.score:.2f}% of {result.covered} covered "
            f"({result.skipped} skipped; semantic {100 * result.semantic_accuracy:.2f}%, "
            f"syntactic {100 * result.syntactic_accuracy:.2f}%)"
        )
        if args.sections:
            for section in result.sections[:-1]:
                print(f"  {section.name:30s} {100 * section.accuracy:6.2f}% of {section.covered}")
    for path in args.word_pairs:
        pairs = kv.word_pairs_report(path, case_insensitive=args.lowercase)
        print(
            f"pairs {path}: Spearman {pairs.spearman:.4f}, Pearson {pairs.pearson:.4f}, "
            f"oov {100 * pairs.oov_fraction:.1f}% ({pairs.scored} of {pairs.pairs} pairs)"
        )
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.format != TEXT:
        return _export_plugged(args)
    kv = _load(args)
    if args.limit is not None:
        kv = kv.restrict(args.limit)
    path = kv.save_word2vec_format(args.out, binary=args.binary)
    print(f"wrote {len(kv)} vectors of dim {kv.vector_size} to {path}")
    return 0


def _export_plugged(args: argparse.Namespace) -> int:
    from zoo.building.locate import locate
    from zoo.errors import DataError
    from zoo.vectors.convert import export_vectors

    if args.binary:
        raise DataError(f"--binary is {TEXT}'s binary format; --format {args.format} writes its own")
    print(export_vectors(locate(args.file), args.out, args.format, limit=args.limit))
    return 0
