"""The claims the test user has: a name and an e-mail address, behind their scopes."""
from oauth2_provider.oauth2_validators import OAuth2Validator


class Validator(OAuth2Validator):
    def get_additional_claims(self, request):
        return {
            "name": request.user.get_full_name(),
            "email": request.user.email,
            "preferred_username": request.user.username,
        }
