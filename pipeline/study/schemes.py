"""Every option only the length study's variants may name, loaded: importing this module fills the
model's registries (positions, attention, model.norm, the signed count's decoder layer) with the
study's classes. Every module that builds a study variant's model imports it."""

import pipeline.study.attention  # noqa: F401
import pipeline.study.owed_count  # noqa: F401
import pipeline.study.positions  # noqa: F401
import pipeline.study.rezero  # noqa: F401
import pipeline.study.signed_count  # noqa: F401
