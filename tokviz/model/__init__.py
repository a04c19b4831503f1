"""What the windows show, as plain state with events: Qt-free, so it is tested without a widget."""
