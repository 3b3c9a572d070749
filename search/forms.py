"""The new-search form: the reference code and the search settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from search.availability import gpu_available, unavailable_proposers
from search.search_settings import NUMBERS

MAX_UPLOAD_BYTES = 2_000_000  # read no more; the search service refuses what is too large

PROPOSERS = [
    ("builtin", "Built-in (offline, no model)"),
    ("openai", "OpenAI / OpenAI-compatible"),
    ("anthropic", "Anthropic"),
    ("ensemble", "Ensemble (weighted mix of models)"),
]
DEVICES = [("cuda", "CUDA GPU"), ("cpu", "CPU")]
POLICIES = [("any", "Anything faster (torch, compile, precision within tolerance)"),
            ("custom-kernels", "Custom kernels only (the profiler must show your own kernels)")]


class SelectWithDisabled(forms.Select):
    """A select whose options in `disabled` are shown but cannot be chosen."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.disabled: set[str] = set()

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)
        if str(value) in self.disabled:
            option["attrs"]["disabled"] = True
        return option


def proposer_choices() -> tuple[list[tuple[str, str]], set[str]]:
    """The proposers, each saying what it lacks on this server, and those that lack something."""
    unavailable = unavailable_proposers()
    choices = [(key, f"{label} — {unavailable[key]}" if key in unavailable else label)
               for key, label in PROPOSERS]
    return choices, set(unavailable)


def device_choices() -> list[tuple[str, str]]:
    """The devices this deployment can run: CUDA only with a GPU here or GPU workers."""
    return [(key, label) for key, label in DEVICES if key != "cuda" or gpu_available()]


def default_device() -> str:
    """The runner's device: RUNNER_DEVICE (settings resolve cuda/cpu), else cpu."""
    return settings.RUNNER_DEVICE or "cpu"


class NewSearchForm(forms.Form):
    reference = forms.CharField(
        required=False, strip=False,
        widget=forms.Textarea(attrs={"rows": 28, "spellcheck": "false", "autocomplete": "off",
                                     "wrap": "off", "class": "code-input"}),
    )
    reference_file = forms.FileField(required=False, label="or upload a .py file")
    title = forms.CharField(required=False, max_length=200)
    proposer = forms.ChoiceField(choices=PROPOSERS, initial="builtin", widget=SelectWithDisabled)
    model = forms.CharField(required=False, max_length=200,
                            help_text="e.g. gpt-5, claude-sonnet-4-5, or openai:a=0.7,anthropic:b=0.3; "
                                      "built-in: optional ideas such as torch_compile")
    rounds = forms.IntegerField(min_value=1, initial=5)
    ideas_per_round = forms.IntegerField(min_value=1, initial=4, label="Ideas per round")
    impls_per_idea = forms.IntegerField(min_value=1, initial=2,
                                        label="Implementations per idea")
    tolerance = forms.FloatField(initial=1e-2, help_text="atol and rtol")
    policy = forms.ChoiceField(choices=POLICIES, initial="any", widget=forms.RadioSelect)
    device = forms.ChoiceField(choices=DEVICES)
    max_candidates = forms.IntegerField(required=False, min_value=1, label="Stop after candidates",
                                        help_text="budget; empty: no limit")
    max_cost_usd = forms.FloatField(required=False, label="Stop after US$",
                                    help_text="model calls; empty: no limit")
    max_minutes = forms.FloatField(required=False, label="Stop after minutes",
                                   help_text="wall clock; empty: no limit")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, number in NUMBERS.items():  # the limits clean_config applies, shown by the browser
            if name in self.fields and number.whole:
                self.fields[name].max_value = int(number.maximum())
                self.fields[name].widget.attrs["max"] = int(number.maximum())
        self.fields["device"].choices = device_choices()
        self.fields["device"].initial = default_device()
        self.fields["model"].initial = settings.DEFAULT_MODEL
        choices, disabled = proposer_choices()
        if settings.DEFAULT_PROPOSER in dict(PROPOSERS) and settings.DEFAULT_PROPOSER not in disabled:
            self.fields["proposer"].initial = settings.DEFAULT_PROPOSER
        self.fields["proposer"].choices = choices
        self.fields["proposer"].widget.disabled = disabled

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # Real numbers: the bounds of search_settings.NUMBERS, as clean_config and the API say them.
        for field, name, scale in (("tolerance", "tolerance", 1), ("max_cost_usd", "max_cost_usd", 1),
                                   ("max_minutes", "max_wall_s", 60)):
            if data.get(field) is not None:
                _, why = NUMBERS[name].check(data[field] * scale)
                if why:
                    self.add_error(field, why)
        unavailable = unavailable_proposers()
        if data.get("proposer") in unavailable:  # the option is disabled; a crafted post is not
            self.add_error("proposer", unavailable[data["proposer"]])
        text = data.get("reference") or ""
        upload = data.get("reference_file")
        if not text.strip() and upload is not None:
            raw = upload.read(MAX_UPLOAD_BYTES)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.add_error("reference", "The uploaded file is not UTF-8 text.")
                return data
            # Keep the uploaded text in the editor if the runner rejects it.
            self.data = self.data.copy()
            self.data["reference"] = text
        data["reference"] = text.replace("\r\n", "\n")
        return data

    def search_settings(self) -> dict[str, Any]:
        """The settings as the search service and the JSON API take them."""
        d = self.cleaned_data
        return {
            "proposer": d["proposer"],
            "model": d["model"],
            "rounds": d["rounds"],
            "ideas_per_round": d["ideas_per_round"],
            "impls_per_idea": d["impls_per_idea"],
            "tolerance": d["tolerance"],
            "policy": d["policy"],
            "device": d["device"],
            "title": d["title"],
            "max_candidates": d.get("max_candidates"),
            "max_cost_usd": d.get("max_cost_usd"),
            "max_wall_s": d["max_minutes"] * 60 if d.get("max_minutes") else None,
        }
