"""The tagger's config templates, one per variant (the default recipe), read by ``recipes``."""
