"""Agreement with people: blind samples, what they show, and the labels they let stand."""
