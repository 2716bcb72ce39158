"""Commands that live in their own module: each has ``build(Parser, session_options)`` and ``run(args)``."""
