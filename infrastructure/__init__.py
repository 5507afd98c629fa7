"""Shared infrastructure for every app: API errors, authentication, throttles, the task
queue, query flags, settings from the environment. It imports no app."""
