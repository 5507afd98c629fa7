"""Reading a campaign description (YAML, docs/campaign-file.md) and the files it names into
a CampaignSpec, without the database; every problem is collected and reported at once."""

from campaign.campaign_file.phases import PHASE_KEYS, phases_out_of_order
from campaign.campaign_file.problems import CampaignFileError
from campaign.campaign_file.questions import GOLD_ANSWER_MISSING, QuestionSpec
from campaign.campaign_file.reader import JUDGE_THRESHOLDS, CampaignSpec, read_campaign_file
from campaign.campaign_file.teams import TeamSpec
from campaign.campaign_file.tracks import TRACK_KINDS, TrackSpec

__all__ = [
    "GOLD_ANSWER_MISSING", "JUDGE_THRESHOLDS", "PHASE_KEYS", "TRACK_KINDS",
    "CampaignFileError", "CampaignSpec", "QuestionSpec", "TeamSpec", "TrackSpec",
    "phases_out_of_order", "read_campaign_file",
]
