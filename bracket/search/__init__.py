"""Search space and the controller that proposes the next configuration."""
