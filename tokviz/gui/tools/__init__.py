"""The Tools dialogs: vocabulary browser, merge replay, pipeline, cost analysis, vocabulary extension."""
