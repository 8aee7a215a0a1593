"""Edge-memorisation and path-query sequences, as token ids and as text."""

from ._tasks import SPECIALS as SPECIALS
from ._tasks import Example as Example
from ._tasks import Vocab as Vocab
from ._tasks import edge_examples as edge_examples
from ._tasks import from_text as from_text
from ._tasks import path_examples as path_examples
from ._tasks import to_text as to_text

__all__ = ["SPECIALS", "Example", "Vocab", "edge_examples", "from_text", "path_examples", "to_text"]
