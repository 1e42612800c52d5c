"""Every check of the kit, ready to run: ``pytest --pyargs zoo.testing.suite --zoo-plugin NAME``."""

from zoo.testing.attention import AttentionTests
from zoo.testing.base import ComponentChecks
from zoo.testing.causal import CausalModelTests
from zoo.testing.components import CellTests, EmbedderTests, EncoderTests
from zoo.testing.models import ModelTests
from zoo.testing.plugins import PluginChecks
from zoo.testing.search import SamplerTests, WidthSearchTests
from zoo.testing.strategies import StrategyTests


class TestPlugins(PluginChecks):
    pass


class TestComponents(ComponentChecks):
    pass


class TestEmbedders(EmbedderTests):
    pass


class TestCells(CellTests):
    pass


class TestEncoders(EncoderTests):
    pass


class TestAttention(AttentionTests):
    pass


class TestStrategies(StrategyTests):
    pass


class TestWidthSearch(WidthSearchTests):
    pass


class TestSamplers(SamplerTests):
    pass


class TestModels(ModelTests):
    pass


class TestCausalModels(CausalModelTests):
    pass
