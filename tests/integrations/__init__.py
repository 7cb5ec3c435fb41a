"""Framework adapter tests: directives reach pydantic-ai, OpenAI Agents SDK and LangGraph runs."""
