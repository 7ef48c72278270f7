#!/usr/bin/env python3
"""The test OpenID Provider's Django entry point (scripts/with-oidc-provider runs it)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "coffer_provider.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
