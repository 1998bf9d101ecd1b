"""Game modules. Each registers its questions with :func:`analyzer.questions.register`."""
