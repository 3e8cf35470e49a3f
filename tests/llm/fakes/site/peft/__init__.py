"""Fake ``peft``: PeftModel.from_pretrained records the adapter folder on the fake model."""


class PeftModel:
    @staticmethod
    def from_pretrained(model, adapter):
        model.adapter = adapter
        return model
